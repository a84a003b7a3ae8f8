# placeholder until the data protection rules land (being written now)
def protection_problems(path, record, country_code):
    return []
