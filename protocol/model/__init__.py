"""The model: switches and configurations, the state, the commands, one function per action."""
