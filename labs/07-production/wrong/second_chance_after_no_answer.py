"""A call whose error means no answer is tried once more, with a budget of its own, before the policy answers.

Caught by: test_random_call_sequences_follow_the_contract_hidden, test_every_error_that_means_no_answer_is_answered_by_the_policy
"""

EDITS = [("""        with deadline(int(budget_ms)):
            answer = call(kept[1])
    except redis.exceptions.RedisError as exc:""", """        try:
            with deadline(int(budget_ms)):
                answer = call(kept[1])
        except redis.exceptions.RedisError as first:
            if not no_answer(first):
                raise
            with deadline(int(budget_ms)):
                answer = call(kept[1])
    except redis.exceptions.RedisError as exc:""")]
