"""Wrong: view_count returns GET's reply as it comes, the string "3", not the int 3 (a post never viewed
still gives the int 0, so a quick try with a new post looks right).

Caught by: test_view_count_reads_without_creating, test_random_call_sequences_follow_the_contract_hidden
"""

EDITS = [('    value = r.get(r.key("views", "post", post_id))\n    return int(value) if value is not None else 0\n',
          '    value = r.get(r.key("views", "post", post_id))\n    return value if value is not None else 0\n')]
