"""Submissions: intake at upload, the participant's and the organiser's views of them."""
