"""Loss functions and their gradients over feature arrays; nothing here knows chess rules."""
