"""Lesson 19's tests: its answers, its rules and its topics."""
