"""Op cases, one module per op family (the families of csrc/ops/). See tests/harness.py."""
