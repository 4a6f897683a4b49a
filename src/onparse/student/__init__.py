"""The student kind (onparse distill): a span parser trained on a teacher's trees."""
