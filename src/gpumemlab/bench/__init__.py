"""Measurement harness: timer, statistics, ceilings, verification, records."""
