"""Wrong: guarded calls Redis on the ordinary client, whose socket timeout is far longer than the budget, so a paused server holds every request."""

EDITS = [("            answer = call(kept[1])\n", "            answer = call(r)\n")]
