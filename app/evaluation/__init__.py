"""Where a competition meets the pure engine: the metric it scores with (registered or the
organiser's file), its answer key parsed for the scorer under the configured limits, and the
organiser's metric run through the sandbox. The jobs, the boards and the stats build on it."""
