// name: change_initial_password
// Run against the system database while the default password is still in force.
ALTER CURRENT USER SET PASSWORD FROM $old TO $new;

// name: components
CALL dbms.components() YIELD name, versions, edition RETURN name, versions[0] AS version, edition;

// name: await_indexes
CALL db.awaitIndexes($seconds);

// name: list_indexes
SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties RETURN name, type, state, labelsOrTypes, properties;
