"""The events thread: runs the stream's readers (notifications, webhooks) and the time sweep in
each API process. Apart from app.events, which every fact's writer imports, so that writing an
event never depends on what reads it."""
