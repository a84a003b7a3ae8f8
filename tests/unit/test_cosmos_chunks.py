"""How the Cosmos DB adapter splits ids into parameterised queries (backends/cosmos/items.py `chunks`)."""

from backends.cosmos.items import ID_CHARACTERS_PER_QUERY, IDS_PER_QUERY, chunks


def test_a_batchs_ids_go_in_one_query():
    ids = [f"PAY-{n:08d}" for n in range(600)]
    assert list(chunks(ids)) == [ids]


def test_many_ids_are_split_by_count_and_nothing_is_lost():
    ids = [str(n) for n in range(2 * IDS_PER_QUERY + 1)]
    split = list(chunks(ids))
    assert [len(chunk) for chunk in split] == [IDS_PER_QUERY, IDS_PER_QUERY, 1]
    assert [one for chunk in split for one in chunk] == ids


def test_long_ids_are_split_by_their_characters():
    ids = ["店" * (ID_CHARACTERS_PER_QUERY // 3)] * 4 + ["x" * (ID_CHARACTERS_PER_QUERY + 1)]
    split = list(chunks(ids))
    assert all(sum(map(len, chunk)) <= ID_CHARACTERS_PER_QUERY or len(chunk) == 1 for chunk in split)
    assert [one for chunk in split for one in chunk] == ids and len(split) == 3
