"""Lesson 05's tests: its answers, its rules and its topics."""
