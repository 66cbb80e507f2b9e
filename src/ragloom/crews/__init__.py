"""Crew YAML to agent graphs."""
