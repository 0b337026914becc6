"""Lesson 03's tests: its answers, its rules and its topics."""
