"""Lesson 17's tests: its answers, its rules and its topics."""
