"""Lesson 01's tests: its answers, its rules and its topics."""
