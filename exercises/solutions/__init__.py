"""Reference solutions for the exercises. Try each exercise first: ``qN.solution()`` prints the one you need."""
