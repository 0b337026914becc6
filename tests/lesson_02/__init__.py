"""Lesson 02's tests: its answers, its rules and its topics."""
