"""Clients of elsai's HTTP APIs, shared by the CLI (`elsai jobs`) and the console (`elsai console`)."""
