"""Lesson 04's tests: its answers, its rules and its topics."""
