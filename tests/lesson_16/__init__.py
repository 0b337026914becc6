"""Lesson 16's tests: its answers, its rules and its topics."""
