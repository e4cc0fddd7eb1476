"""Tests of the example registry (tools.d/) and its handlers (examples/toolctl_examples/)."""
