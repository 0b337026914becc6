"""Lesson 14's tests: its answers, its rules and its topics."""
