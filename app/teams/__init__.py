"""Teams: joining, invitations, merges and the rule that a user is on one team per competition."""
