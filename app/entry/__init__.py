"""Who may enter a competition, as the upload path asks it: the registration gate and the
allow and deny lists. A leaf (models and errors only), so that submissions, the kaggle adapter
and the competitions' schemas can ask without depending on how one joins (app.registration)."""
