"""The Redis layer under everything else: one way to get a client (fakeredis or a real server, keys under one prefix per run), private ``redis-server`` processes, redis-cli transcripts run and printed as redis-cli does, and every private API of redis-py and fakeredis fenced in one module.

This file imports nothing: the browser console ships it as it is, with ``compat`` and ``transcripts``.
"""
