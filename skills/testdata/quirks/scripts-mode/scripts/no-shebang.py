print("no shebang")
