"""Lesson 08's tests: its answers, its rules and its topics."""
