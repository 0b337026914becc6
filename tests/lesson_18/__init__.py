"""Lesson 18's tests: its answers, its rules and its topics."""
