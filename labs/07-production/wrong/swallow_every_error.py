"""Wrong: guarded answers by its policy for any exception, so fail-open also admits every request that a bug or a WRONGTYPE error breaks."""

EDITS = [("    except NO_ANSWER:\n", "    except Exception:\n")]
