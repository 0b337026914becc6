"""Lesson 07's tests: its answers, its rules and its topics."""
