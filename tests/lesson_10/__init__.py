"""Lesson 10's tests: its answers, its rules and its topics."""
