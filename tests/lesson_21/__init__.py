"""Lesson 21's tests: its answers, its rules and its topics."""
