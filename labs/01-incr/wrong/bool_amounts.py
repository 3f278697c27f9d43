"""deposit, withdraw and safe_incr check amounts with isinstance(x, int), which lets True and False through.

Caught by: test_deposit_checks_its_arguments_hidden
"""

EDITS = [("    if type(amount) is not int:\n", "    if not isinstance(amount, int):\n"),
         ("    if type(cents) is not int:\n"
          "        raise TypeError(f\"cents must be an int, not {type(cents).__name__}\")\n"
          "    if cents <= 0:\n"
          "        raise ValueError(f\"a deposit",
          "    if not isinstance(cents, int):\n"
          "        raise TypeError(f\"cents must be an int, not {type(cents).__name__}\")\n"
          "    if cents <= 0:\n"
          "        raise ValueError(f\"a deposit"),
         ("    if type(cents) is not int:\n"
          "        raise TypeError(f\"cents must be an int, not {type(cents).__name__}\")\n"
          "    if cents <= 0:\n"
          "        raise ValueError(f\"a withdrawal",
          "    if not isinstance(cents, int):\n"
          "        raise TypeError(f\"cents must be an int, not {type(cents).__name__}\")\n"
          "    if cents <= 0:\n"
          "        raise ValueError(f\"a withdrawal")]
