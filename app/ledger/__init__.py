"""The record: a signed, hash-chained log per competition of every fact that decides a rank."""
