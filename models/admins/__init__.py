"""Site admins and their sign-ins, and the Mechanic's Exception: the one way a human reads memory."""
