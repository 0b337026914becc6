"""Lesson 09's tests: its answers, its rules and its topics."""
