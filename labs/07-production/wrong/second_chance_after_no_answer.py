"""A call whose error means no answer is tried once more, with a budget of its own, before the policy answers."""

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
