"""Lesson 15's tests: its answers, its rules and its topics."""
