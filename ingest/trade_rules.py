# placeholder until the recording rules land (being written now)
def record_warnings(path, record, exponent, standard_type, known_payment_types, store_time_zone, workday_start):
    return []
