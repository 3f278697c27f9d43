"""Wrong: deposit sends whatever it gets to INCRBY, unchecked. A float or a str reaches Redis (which
answers with a ResponseError, not TypeError), negative deposits are accepted, and an amount past 2**63 − 1
escapes as ResponseError instead of OverflowError.

Caught by: test_deposit_refuses_a_float
"""

EDITS = [('''    if type(cents) is not int:
        raise TypeError(f"cents must be an int, not {type(cents).__name__}")
    if cents <= 0:
        raise ValueError(f"a deposit must be positive, got {cents}")
    if cents > MAX_INT64:
        raise OverflowError(f"{cents} cents is more than a balance can hold")
''', "")]
