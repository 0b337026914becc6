"""Lesson 12's tests: its answers, its rules and its topics."""
