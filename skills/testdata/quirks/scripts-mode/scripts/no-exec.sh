#!/bin/sh
echo no exec bit
