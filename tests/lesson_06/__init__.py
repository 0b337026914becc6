"""Lesson 06's tests: its answers, its rules and its topics."""
