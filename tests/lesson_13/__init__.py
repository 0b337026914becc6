"""Lesson 13's tests: its answers, its rules and its topics."""
