"""The renderer and game simulator that make training and test data with known truth."""
