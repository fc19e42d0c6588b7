# -*- coding: utf-8 -*-
JUDGES = ()
