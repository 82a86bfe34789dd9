"""`zerocopy bench`: every path that can run here, plus the baseline, measured side by side."""
