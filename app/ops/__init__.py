"""What a host watches: Prometheus metrics, health and readiness, structured logs."""
