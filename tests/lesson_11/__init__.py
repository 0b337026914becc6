"""Lesson 11's tests: its answers, its rules and its topics."""
