"""Lesson 20's tests: its answers, its rules and its topics."""
